/** Argument checks of the Cassandra stores: the driver-neutral ones of store/inputs.ts. */
export { checkEpoch, checkPreview, CONVERSATION_TYPES, MESSAGE_TYPES } from '../inputs.ts';
