// The validity statistics (docs/validity.md): targets compared with what runs measured, the
// scalar distance calibration minimises, and the summaries and divergences beneath them. Pure.
export { evaluateTarget, evaluateTargets, targetDistance, describeMeasure, describeTarget, UNDER_DISPERSION } from './evaluate.js';
export {
  mean,
  sampleSd,
  meanInterval,
  pairedDifference,
  welchDifference,
  varianceRatio,
  studentTCdf,
  studentTQuantile,
  twoSidedP,
  type MeanInterval,
  type Difference,
} from './stats.js';
export {
  jensenShannon,
  jensenShannonShares,
  jensenShannonHistogram,
  binWeights,
  kolmogorovSmirnov,
  kolmogorovSmirnovQuantiles,
  wasserstein1,
  wasserstein1Quantiles,
  quantilePoints,
  unweighted,
  type Weighted,
} from './divergence.js';
export type { Target, TargetKind, TargetObservation, TargetResult, CurvePoint } from './types.js';
