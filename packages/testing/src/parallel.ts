/** Runs `task` over `items` with at most `limit` in flight; rejects with the first failure. */
export async function parallel<T>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
      while (next < items.length) {
        const index = next++;
        await task(items[index]!, index);
      }
    }),
  );
}
