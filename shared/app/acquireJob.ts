/** The acquirer (shared/app/acquire/): one file per protocol row it writes, and the dispatcher over them. */
export { Acquirer } from './acquire/acquirer';
export { AcquireResult, type InboundMessage } from './acquire/result';
