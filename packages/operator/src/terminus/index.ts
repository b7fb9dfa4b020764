// @nestor/operator/terminus: the operator's health for @nestjs/terminus (an optional peer).
export { OperatorHealthIndicator } from './operator-health.indicator.js';
