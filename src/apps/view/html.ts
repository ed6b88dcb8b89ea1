// HTML pieces of the viewer: escaping, agent colours, message text with its output tags.

export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export const PALETTE = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#9467bd',
  '#ff7f0e',
  '#17becf',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#393b79',
  '#637939',
  '#843c39',
  '#7b4173',
];

/** One colour per agent: by its place among the SOP's agents, else by a hash of its name. */
export function agentColour(name: string, agents: readonly string[]): string {
  const i = agents.indexOf(name);
  if (i >= 0) return PALETTE[i % PALETTE.length]!;
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return PALETTE[h % PALETTE.length]!;
}

/**
 * Message text, escaped, with each `<tag>...</tag>` pair shown as a labelled block; `output`: the
 * role's output tag, whose text the message holds without the tag (the whole text is that block).
 */
export function renderContent(text: string, output?: string): string {
  if (output !== undefined && !text.includes(`<${output}>`))
    return `<span class="tag"><span class="tag-label">${esc(output)}</span>${renderContent(text)}</span>`;
  const re = /<([A-Za-z_][\w-]{0,40})>([\s\S]*?)<\/\1>/g;
  let out = '';
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out += esc(text.slice(last, m.index));
    out += `<span class="tag"><span class="tag-label">${esc(m[1]!)}</span>${esc(m[2]!)}</span>`;
    last = m.index + m[0].length;
  }
  return out + esc(text.slice(last));
}

export function formatTime(iso: string | undefined): string {
  return iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '';
}
