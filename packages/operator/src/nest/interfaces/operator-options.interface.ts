// The options are the composition layer's (compose/): OperatorModule and createOperator take the same.
export type * from '../../compose/operator-options.js';
