// The recent window under the prefix-cache rule (docs/memory.md, "Prompt layout"): its first
// message moves only when the summary is refreshed, and in between the window only grows, so two
// prompts between refreshes share everything up to the end of the older one's window.

/**
 * How many recent messages to show when `count` messages exist, for a window of `window` and a
 * summary refreshed every `every` messages (counted over the whole run): `window` plus the
 * messages since the last refresh point, so between refreshes the window only grows.
 * With `chunks` (the summary kept as chunks, native SOPs) it moves only when the summary is
 * refreshed: it holds between `window` and `window + every - 1` messages. Without, when `every`
 * exceeds `window` it also moves every `window` messages between refreshes, so it never holds
 * more than 2 × window - 1. With the default `every` (the window) both rules are the same.
 */
export function alignedWindow(window: number, count: number, every: number, chunks = false): number {
  if (!(window > 0) || !(every > 0) || !(count > 0)) return window;
  return window + (chunks ? count % every : (count % every) % window);
}

/**
 * The window rule for one viewer when the SOP declares audiences (docs/memory.md#audiences): each
 * viewer's summary is refreshed at the same points (every `every` messages of the run), from the
 * messages it may see, and left as it is when it may see none of the new ones. So the viewer's
 * window, taken from the messages it may see (`seen`, oldest first), grows by the messages it may
 * see since the last refresh point, not by all messages of the run: between two refreshes of its
 * summary it only grows, and it moves when that summary is refreshed (and every `window` of its
 * messages when `every` exceeds `window`, as above). Its size right after a refresh is `window`,
 * never more than 2 × window - 1. With `chunks` (as alignedWindow) it moves only at refreshes.
 */
export function viewerAlignedWindow(window: number, seen: readonly { id: number }[], count: number, every: number, chunks = false): number {
  if (!(window > 0) || !(every > 0) || !(count > 0)) return window;
  const refreshed = count - (count % every); // messages before it are in every viewer's summary
  let since = 0;
  for (let i = seen.length - 1; i >= 0 && seen[i]!.id >= refreshed; i--) since++;
  return window + (chunks ? since : since % window);
}
