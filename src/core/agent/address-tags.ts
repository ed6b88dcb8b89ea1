// Audiences (src/core/environment/audience.ts): a role with an `output` tag records only that tag's
// text; its <to> tag (when the state lets it address) and its data tags are kept with it, so
// the run can still address the message and record the data.
import type { SopState } from '../../format/sop/types.js';
import { escapeRegExp } from '../../shared/util/tags.js';

type AudienceSpec = NonNullable<SopState['audience']>[string];

/** `kept` (the output tag's text) with the reply's <to> and data tags put back in front when they are outside it. */
export function keepAddressTags(reply: string, kept: string, spec: AudienceSpec | undefined, output?: string): string {
  if (!spec) return kept;
  const tags = [...(spec.address ? ['to'] : []), ...(spec.data ?? []).filter((t) => t !== output)];
  const front: string[] = [];
  for (const tag of tags) {
    const m = new RegExp(`<${escapeRegExp(tag)}>[\\s\\S]*?</${escapeRegExp(tag)}>`).exec(reply);
    if (m && !kept.includes(m[0])) front.push(m[0]);
  }
  return front.length > 0 ? `${front.join(' ')} ${kept}` : kept;
}
