// TypeScript types of the SOP format, derived from schemas/sop.schema.json (never hand-kept).
import type { FromSchema } from 'json-schema-to-ts';
import type { sopSchema } from './schema.generated.js';

export type Sop = FromSchema<typeof sopSchema>;
export type SopState = Sop['states'][string];
export type SopAgent = Sop['agents'][string];
export type SopComponents = NonNullable<SopState['components']>[string];
export type SopController = NonNullable<SopState['controller']>;
export type SopPrompts = NonNullable<SopController['judge']>;
export type LlmSettings = NonNullable<Sop['llm']>;
export type SopEnvironment = NonNullable<Sop['environment']>;
export type SummarySettings = NonNullable<SopEnvironment['summary']>;
export type SopTemplates = NonNullable<Sop['templates']>;
export type TemplateName = keyof SopTemplates;
export type SopTargets = NonNullable<Sop['targets']>;
export type SopTarget = SopTargets[string];
export type SopExperiment = NonNullable<Sop['experiment']>;
export type SopCalibrate = NonNullable<Sop['calibrate']>;
