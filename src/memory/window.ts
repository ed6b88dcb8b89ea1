// The recent window under the prefix-cache rule (docs/memory.md, "Prompt layout"): its first
// message moves only when the summary is refreshed, and in between the window only grows, so two
// prompts between refreshes share everything up to the end of the older one's window.

/**
 * How many recent messages to show when `count` messages exist, for a window of `window` and a
 * summary refreshed every `every` messages (counted over the whole run): `window` plus the
 * messages since the last refresh point. When `every` exceeds `window`, the window also moves
 * every `window` messages between refreshes, so it never holds more than 2 × window - 1 messages:
 * at most one window's worth more than the sliding rule.
 */
export function alignedWindow(window: number, count: number, every: number): number {
  if (!(window > 0) || !(every > 0) || !(count > 0)) return window;
  return window + ((count % every) % window);
}
