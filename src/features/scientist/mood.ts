// Mood (seed 003): a slowly drifting value in [-1, 1] made of a seeded random walk and the
// sentiment of recent thoughts. Rendered into prompts so that otherwise identical calls differ,
// which helps the agent out of loops. Off unless the SOP enables it; deterministic under a seed.
import { Rng } from '../../core/runtime/rng.js';
import type { Sop } from '../../format/sop/types.js';

export type MoodConfig = NonNullable<Sop['mood']>;

export const MOOD_DEFAULTS = { initial: 0, step: 0.05, sentiment_weight: 0.2, window: 5 } as const;

/** Word stems and their sentiment; a thought's score is the balance of the stems it contains. */
const POSITIVE = [
  'good',
  'great',
  'success',
  'succeed',
  'work',
  'confirm',
  'solved',
  'progress',
  'clear',
  'correct',
  'promising',
  'confident',
  'accept',
  'pass',
  'agree',
  'found',
  'done',
  'interesting',
];
const NEGATIVE = [
  'fail',
  'error',
  'wrong',
  'stuck',
  'loop',
  'confus',
  'unclear',
  'falsif',
  'reject',
  'bug',
  'impossible',
  'frustrat',
  'doubt',
  'again',
  'unsure',
  'crash',
  'broken',
  'contradict',
];

/** Sentiment of a text in [-1, 1]: (positive - negative) / (positive + negative) word stems. */
export function sentiment(text: string): number {
  let pos = 0;
  let neg = 0;
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    if (POSITIVE.some((s) => word.startsWith(s))) pos++;
    if (NEGATIVE.some((s) => word.startsWith(s))) neg++;
  }
  return pos + neg === 0 ? 0 : (pos - neg) / (pos + neg);
}

export function moodLabel(value: number): string {
  if (value < -0.6) return 'gloomy';
  if (value < -0.2) return 'uneasy';
  if (value <= 0.2) return 'calm';
  if (value <= 0.6) return 'content';
  return 'upbeat';
}

export interface MoodState {
  value: number;
  rng: number;
}

/** What templates see as {{mood}} (undefined when mood is off, so {{#if mood}} hides it). */
export interface MoodView {
  label: string;
  value: string;
}

export class Mood {
  readonly enabled: boolean;
  private value: number;
  private readonly rng: Rng;
  private readonly step: number;
  private readonly weight: number;
  readonly window: number;

  constructor(config: MoodConfig = {}, seed = 1) {
    this.enabled = config.enabled === true;
    this.value = config.initial ?? MOOD_DEFAULTS.initial;
    this.step = config.step ?? MOOD_DEFAULTS.step;
    this.weight = config.sentiment_weight ?? MOOD_DEFAULTS.sentiment_weight;
    this.window = config.window ?? MOOD_DEFAULTS.window;
    // Its own stream, so enabling mood does not change other seeded choices of the run.
    this.rng = new Rng((seed ^ 0x6d6f6f64) >>> 0);
  }

  get current(): number {
    return this.value;
  }

  /** One drift: a random step, then a pull toward the sentiment of the recent thoughts. */
  update(recentThoughts: readonly string[] = []): number {
    if (!this.enabled) return this.value;
    const walked = this.value + this.step * (2 * this.rng.next() - 1);
    const recent = recentThoughts.slice(-this.window);
    const mood =
      recent.length === 0
        ? walked
        : (1 - this.weight) * walked + this.weight * (recent.reduce((s, t) => s + sentiment(t), 0) / recent.length);
    this.value = Math.max(-1, Math.min(1, mood));
    return this.value;
  }

  view(): MoodView | undefined {
    if (!this.enabled) return undefined;
    return { label: moodLabel(this.value), value: (this.value >= 0 ? '+' : '') + this.value.toFixed(2) };
  }

  save(): MoodState {
    return { value: this.value, rng: this.rng.state };
  }
  restore(state: MoodState): void {
    this.value = state.value;
    this.rng.state = state.rng;
  }
}

/** The mood at a turn, replayed from the start of the run: one drift per turn, pulled by the
 * thoughts had before it. A pure function of (config, seed, turn, thoughts), so a resumed or
 * forked run has the same mood without saving any state. */
export function moodAt(
  config: MoodConfig | undefined,
  seed: number,
  turn: number,
  thoughts: ReadonlyArray<{ text: string; turn: number }>,
): MoodView | undefined {
  const mood = new Mood(config ?? {}, seed);
  if (!mood.enabled) return undefined;
  const sorted = [...thoughts].sort((a, b) => a.turn - b.turn);
  let known = 0;
  for (let t = 1; t <= turn; t++) {
    while (known < sorted.length && sorted[known]!.turn < t) known++;
    mood.update(sorted.slice(Math.max(0, known - mood.window), known).map((x) => x.text));
  }
  return mood.view();
}
