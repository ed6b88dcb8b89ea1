// The Agents 1.0 prompt templates live with the components that use them (src/core/components/templates.ts).
export { renderV1, type V1TemplateName } from '../../../../core/components/templates.js';
