/**
 * The size EventBridge gives a PutEvents entry, and its limit (pure: the fakes and the size tests use it).
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html: Time (if given) is 14 bytes; Source,
 * DetailType, Detail and each Resources entry count their UTF-8 bytes; "the total entry size must be less than 256KB".
 */
export const MAX_PUT_EVENTS_ENTRY_BYTES = 256 * 1024;

export interface PutEventsEntry {
  Source: string;
  DetailType: string;
  Detail?: string;
  Resources?: string[];
  Time?: Date;
}

export function putEventsEntrySize(entry: PutEventsEntry): number {
  const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
  return (
    (entry.Time ? 14 : 0) +
    bytes(entry.Source) +
    bytes(entry.DetailType) +
    (entry.Detail === undefined ? 0 : bytes(entry.Detail)) +
    (entry.Resources ?? []).reduce((sum, resource) => sum + bytes(resource), 0)
  );
}
