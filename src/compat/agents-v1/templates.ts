// The Agents 1.0 prompt templates live with the components that use them (src/components/templates.ts).
export { renderV1, type V1TemplateName } from '../../components/templates.js';
