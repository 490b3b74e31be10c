export { matchesPattern, assertValidPattern, InvalidEventPatternError, type EventPattern } from './eventPattern';
export {
  LocalEventBus,
  type BusEvent,
  type BusEventInput,
  type BusRule,
  type BusFaults,
  type BusStats,
  type DeliveryAttempt,
  type DeliveryRecord,
  type LocalEventBusOptions,
} from './localEventBus';
