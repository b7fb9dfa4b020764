/** A ring buffer: O(1) push and shift, where Array#shift may move every element. */
export class Fifo<T> {
  private items: (T | undefined)[] = new Array<T | undefined>(16);
  private head = 0;
  private size = 0;

  get length(): number {
    return this.size;
  }

  push(item: T): void {
    if (this.size === this.items.length) this.grow();
    this.items[(this.head + this.size) & (this.items.length - 1)] = item;
    this.size++;
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined; // no reference kept to a key that left
    this.head = (this.head + 1) & (this.items.length - 1);
    this.size--;
    return item;
  }

  /** Doubles the capacity, which stays a power of two so `&` wraps indexes. */
  private grow(): void {
    const items = new Array<T | undefined>(this.items.length * 2);
    for (let i = 0; i < this.size; i++) items[i] = this.items[(this.head + i) & (this.items.length - 1)];
    this.items = items;
    this.head = 0;
  }
}
