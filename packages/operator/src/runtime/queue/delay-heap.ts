export interface Delayed<K> {
  key: K;
  readyAt: number;
  /** Insertion order: keys due at the same time are added in the order they were asked. */
  seq: number;
  /** Position in the heap array, kept current so a key's entry moves in O(log n). */
  index: number;
}

/** A binary min-heap of delayed adds by ready time, with one entry per key. */
export class DelayHeap<K> {
  private readonly heap: Delayed<K>[] = [];
  private readonly byKey = new Map<K, Delayed<K>>();
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  peek(): Delayed<K> | undefined {
    return this.heap[0];
  }

  /** Schedules `key` at `readyAt`, or moves its entry earlier. True when anything changed. */
  schedule(key: K, readyAt: number): boolean {
    const entry = this.byKey.get(key);
    if (entry) {
      if (readyAt >= entry.readyAt) return false;
      entry.readyAt = readyAt;
      this.up(entry.index);
      return true;
    }
    const added: Delayed<K> = { key, readyAt, seq: this.seq++, index: this.heap.length };
    this.heap.push(added);
    this.byKey.set(key, added);
    this.up(added.index);
    return true;
  }

  pop(): void {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (!top || !last) return;
    this.byKey.delete(top.key);
    if (last === top) return;
    this.place(last, 0);
    this.down(0);
  }

  clear(): void {
    this.heap.length = 0;
    this.byKey.clear();
  }

  private up(index: number): void {
    const entry = this.heap[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = this.heap[parentIndex]!;
      if (!before(entry, parent)) break;
      this.place(parent, index);
      index = parentIndex;
    }
    this.place(entry, index);
  }

  private down(index: number): void {
    const entry = this.heap[index]!;
    const size = this.heap.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= size) break;
      const right = left + 1;
      const childIndex = right < size && before(this.heap[right]!, this.heap[left]!) ? right : left;
      const child = this.heap[childIndex]!;
      if (!before(child, entry)) break;
      this.place(child, index);
      index = childIndex;
    }
    this.place(entry, index);
  }

  private place(entry: Delayed<K>, index: number): void {
    this.heap[index] = entry;
    entry.index = index;
  }
}

function before<K>(a: Delayed<K>, b: Delayed<K>): boolean {
  return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
}
