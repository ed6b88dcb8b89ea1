// Audiences: who may see each message (docs/memory.md#audiences). A SOP declares `groups` of
// agents and, per state and role, whom the role speaks to (`to`: "all", a group, "self" or an
// agent), what it sees (`sees: "all"` for a moderator), whether it may address a message with
// <to>NAME</to>, and which output tags are recorded as data. The environment filters every part
// of a prompt (window, retrieval, summary, judge and speaker prompts) through `canSee`.
import type { Message } from './message.js';
import type { Sop, SopState } from '../../format/sop/types.js';
import { escapeRegExp } from '../../shared/util/tags.js';

/** Who looks: an agent's name, ALL (every message), PUBLIC (messages for everyone), or agents whose common ground it is. */
export type Viewer = string | readonly string[];
export const ALL = '*all';
export const PUBLIC = '*public';

type AudienceSpec = NonNullable<SopState['audience']>[string];

/** What the run records on a message about its audience. */
export interface Addressed {
  content: string;
  audience: string[];
  to?: string;
  data?: Record<string, string>;
  /** A <to> tag naming no agent or group (the declared audience was kept). */
  warning?: string;
}

function tagText(text: string, tag: string): string | undefined {
  const m = new RegExp(`<${escapeRegExp(tag)}>([\\s\\S]*?)</${escapeRegExp(tag)}>`).exec(text);
  return m ? m[1]!.trim() : undefined;
}

const TO_TAG = /<to>([\s\S]*?)<\/to>/g;

/** The audience rules of a SOP; `active` is false for a SOP that declares none (nothing is filtered beyond the environment type). */
export class AudienceRules {
  readonly agents: string[];
  readonly active: boolean;
  /** Agents playing a role that `sees: "all"` in some state: they are in every message's audience (moderators, narrators). */
  readonly watchers: string[];
  private readonly groups: Record<string, string[]>;

  constructor(private readonly sop: Sop) {
    this.agents = Object.keys(sop.agents);
    this.groups = { ...(sop.groups ?? {}) };
    this.watchers = this.agents.filter((a) =>
      Object.entries(sop.agents[a]!.roles ?? {}).some(([state, role]) => this.spec(state, role)?.sees === 'all'),
    );
    this.active =
      Object.keys(this.groups).length > 0 ||
      Object.values(sop.states).some((s) => (s.audience && Object.keys(s.audience).length > 0) || s.controller?.sees !== undefined);
  }

  private spec(state: string, role: string): AudienceSpec | undefined {
    const a = this.sop.states[state]?.audience;
    return a && Object.prototype.hasOwnProperty.call(a, role) ? a[role] : undefined;
  }

  /** Whether `role` may address its messages in `state` (<to>NAME</to>). */
  addresses(state: string, role: string): boolean {
    return this.spec(state, role)?.address === true;
  }

  /** The agents a `to` value names (author and watchers included), or undefined for everyone; null when a name is unknown. */
  members(to: string, author: string): string[] | undefined | null {
    const out = new Set<string>([author, ...this.watchers]);
    for (const raw of to.split(',')) {
      const name = raw.trim();
      if (name === 'all') return undefined;
      if (name === 'self' || name === '') continue;
      if (Object.prototype.hasOwnProperty.call(this.groups, name)) for (const a of this.groups[name]!) out.add(a);
      else if (this.agents.includes(name)) out.add(name);
      else return null;
    }
    return this.agents.filter((a) => out.has(a));
  }

  /** The audience of a message `agent` says as `role` in `state` (its <to> tag removed, its data tags read). */
  address(state: string, role: string, agent: string, content: string): Addressed {
    const spec = this.spec(state, role);
    let to = spec?.to;
    let warning: string | undefined;
    let text = content;
    if (spec?.address) {
      let asked: string | undefined;
      text = content.replace(TO_TAG, (_m, name: string) => {
        asked ??= name.trim();
        return '';
      });
      if (text !== content) text = text.trim();
      if (asked !== undefined) {
        if (this.members(asked, agent) === null)
          warning = `${agent} addressed <to>${asked.slice(0, 60)}</to> in state "${state}", which names no agent or group; the message goes to ${to ?? 'all'}`;
        else to = asked;
      }
    }
    let data: Record<string, string> | undefined;
    const output = this.sop.states[state]?.components?.[role]?.output;
    for (const tag of spec?.data ?? []) {
      // The role's output tag is already stripped: the whole text is its value.
      const v = tagText(text, tag) ?? (tag === output && text !== '' ? text : undefined);
      if (v !== undefined) (data ??= {})[tag] = v;
    }
    const members = to === undefined ? undefined : this.members(to, agent);
    const restricted = members !== undefined && members !== null && members.length < this.agents.length;
    return {
      content: text,
      audience: restricted ? members : [...this.agents],
      ...(restricted ? { to } : {}),
      ...(data ? { data } : {}),
      ...(warning ? { warning } : {}),
    };
  }

  /** Who the judge and speaker choice of a state are (its `controller.sees`; default: the common ground of its roles' agents). */
  controllerViewer(state: string): Viewer {
    const def = this.sop.states[state];
    const sees = def?.controller?.sees ?? 'roles';
    if (sees === 'all') return ALL;
    if (sees !== 'roles') return sees;
    const agents = this.agents.filter((a) => this.sop.agents[a]!.roles?.[state] !== undefined);
    return agents.length > 0 ? agents : PUBLIC;
  }
}

/**
 * Whether `viewer` may see message `m`: it is in the message's audience (absent: everyone). `visibleStart` is the environment type's rule (the
 * competitive visit's first message; 0 when cooperative); a message with a declared audience
 * (`to`) outlives it, so a private note stays visible to its author in later states.
 */
export function canSee(viewer: Viewer, m: Message, visibleStart: number, rules?: AudienceRules): boolean {
  if (typeof viewer !== 'string') return viewer.every((v) => canSee(v, m, visibleStart, rules));
  if (viewer === ALL) return true;
  if (m.id < visibleStart && m.to === undefined) return false;
  const audience = m.audience;
  if (audience === undefined) return true;
  if (viewer === PUBLIC) return rules === undefined || rules.agents.every((a) => audience.includes(a));
  return m.sender === viewer || audience.includes(viewer);
}
