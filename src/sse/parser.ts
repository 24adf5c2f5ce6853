/**
 * S1: the event-stream parser (WHATWG HTML, "Server-sent events", the parsing rules), as
 * `eventsource-parser` 3.1 parses, line for line, in one object: its state in fields, its steps
 * as methods on the prototype, and what it finds told to one handler object. The package's
 * `createParser` makes eight closures over one context per parser and the reader three callbacks
 * more: a held stream kept them all (~0.8 KiB per held session: bench/README.md, "Code shapes").
 * What this transport does not use is left out: `maxBufferSize` (the reader bounds an event
 * itself, S5) and `onError` (an unknown field or a bad `retry` is ignored, as the reader did).
 */

/** One dispatched event: its `id` and `event` fields as last set, if set; `data` its lines joined with LF. */
export interface ParsedEvent {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/** What the parser tells, as it finds it. */
export interface ParserHandler {
  onEvent(event: ParsedEvent): void;
  /** A `retry` field of digits only, in milliseconds. */
  onRetry(ms: number): void;
  /** A comment line, without its leading `:` and one space. */
  onComment(comment: string): void;
}

const LF = 10;
const CR = 13;
const SPACE = 32;

/** `data:` at `i`. */
function isDataPrefix(chunk: string, i: number, first: number): boolean {
  return (
    first === 100 &&
    chunk.charCodeAt(i + 1) === 97 &&
    chunk.charCodeAt(i + 2) === 116 &&
    chunk.charCodeAt(i + 3) === 97 &&
    chunk.charCodeAt(i + 4) === 58
  );
}

/** `event:` at `i`. */
function isEventPrefix(chunk: string, i: number, first: number): boolean {
  return (
    first === 101 &&
    chunk.charCodeAt(i + 1) === 118 &&
    chunk.charCodeAt(i + 2) === 101 &&
    chunk.charCodeAt(i + 3) === 110 &&
    chunk.charCodeAt(i + 4) === 116 &&
    chunk.charCodeAt(i + 5) === 58
  );
}

export class EventStreamParser {
  /** Text after the last line end, in the pieces it came in (joined once a line end arrives). */
  private readonly pending: string[] = [];
  private firstChunk = true;
  private id: string | undefined = undefined;
  private data = '';
  private dataLines = 0;
  private eventType: string | undefined = undefined;

  constructor(private readonly handler: ParserHandler) {}

  /** Parses the next piece of the stream's text. */
  feed(text: string): void {
    let chunk = text;
    if (this.firstChunk) {
      this.firstChunk = false;
      // A UTF-8 byte order mark, decoded as text.
      if (chunk.charCodeAt(0) === 239 && chunk.charCodeAt(1) === 187 && chunk.charCodeAt(2) === 191) chunk = chunk.slice(3);
    }
    const pending = this.pending;
    if (pending.length === 0) {
      const trailing = this.processLines(chunk);
      if (trailing !== '') pending.push(trailing);
      return;
    }
    if (chunk.indexOf('\n') === -1 && chunk.indexOf('\r') === -1) {
      pending.push(chunk);
      return;
    }
    pending.push(chunk);
    const input = pending.join('');
    pending.length = 0;
    const trailing = this.processLines(input);
    if (trailing !== '') pending.push(trailing);
  }

  /** Forgets everything: the event in progress and any partial line (its text is dropped). */
  reset(): void {
    this.firstChunk = true;
    this.clearEvent();
    this.pending.length = 0;
  }

  private clearEvent(): void {
    this.id = undefined;
    this.data = '';
    this.dataLines = 0;
    this.eventType = undefined;
  }

  /** Parses the complete lines of `chunk`; returns the text after the last line end. */
  private processLines(chunk: string): string {
    let searchIndex = 0;
    if (chunk.indexOf('\r') === -1) {
      // LF only: the common case, with its fast paths.
      let lfIndex = chunk.indexOf('\n', searchIndex);
      while (lfIndex !== -1) {
        if (searchIndex === lfIndex) {
          this.dispatchEvent();
          searchIndex = lfIndex + 1;
          lfIndex = chunk.indexOf('\n', searchIndex);
          continue;
        }
        const first = chunk.charCodeAt(searchIndex);
        if (isDataPrefix(chunk, searchIndex, first)) {
          const valueStart = chunk.charCodeAt(searchIndex + 5) === SPACE ? searchIndex + 6 : searchIndex + 5;
          const value = chunk.slice(valueStart, lfIndex);
          if (this.dataLines === 0 && chunk.charCodeAt(lfIndex + 1) === LF) {
            // One data line and the blank line after it: the event, at once.
            const event: ParsedEvent = { id: this.id, event: this.eventType, data: value };
            this.handler.onEvent(event);
            this.id = undefined;
            this.data = '';
            this.eventType = undefined;
            searchIndex = lfIndex + 2;
            lfIndex = chunk.indexOf('\n', searchIndex);
            continue;
          }
          this.addData(value);
        } else if (isEventPrefix(chunk, searchIndex, first)) {
          this.eventType =
            chunk.slice(chunk.charCodeAt(searchIndex + 6) === SPACE ? searchIndex + 7 : searchIndex + 6, lfIndex) || undefined;
        } else {
          this.parseLine(chunk, searchIndex, lfIndex);
        }
        searchIndex = lfIndex + 1;
        lfIndex = chunk.indexOf('\n', searchIndex);
      }
      return chunk.slice(searchIndex);
    }
    while (searchIndex < chunk.length) {
      const crIndex = chunk.indexOf('\r', searchIndex);
      const lfIndex = chunk.indexOf('\n', searchIndex);
      let lineEnd = -1;
      if (crIndex !== -1 && lfIndex !== -1) lineEnd = crIndex < lfIndex ? crIndex : lfIndex;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      else if (crIndex !== -1) lineEnd = crIndex === chunk.length - 1 ? -1 : crIndex;
      else if (lfIndex !== -1) lineEnd = lfIndex;
      if (lineEnd === -1) break;
      this.parseLine(chunk, searchIndex, lineEnd);
      searchIndex = lineEnd + 1;
      if (chunk.charCodeAt(searchIndex - 1) === CR && chunk.charCodeAt(searchIndex) === LF) searchIndex++;
    }
    return chunk.slice(searchIndex);
  }

  private addData(value: string): void {
    this.data = this.dataLines === 0 ? value : `${this.data}\n${value}`;
    this.dataLines++;
  }

  private parseLine(chunk: string, start: number, end: number): void {
    if (start === end) {
      this.dispatchEvent();
      return;
    }
    const first = chunk.charCodeAt(start);
    if (isDataPrefix(chunk, start, first)) {
      this.addData(chunk.slice(chunk.charCodeAt(start + 5) === SPACE ? start + 6 : start + 5, end));
      return;
    }
    if (isEventPrefix(chunk, start, first)) {
      this.eventType = chunk.slice(chunk.charCodeAt(start + 6) === SPACE ? start + 7 : start + 6, end) || undefined;
      return;
    }
    if (first === 105 && chunk.charCodeAt(start + 1) === 100 && chunk.charCodeAt(start + 2) === 58) {
      // `id:`; an id with a NULL is ignored.
      const value = chunk.slice(chunk.charCodeAt(start + 3) === SPACE ? start + 4 : start + 3, end);
      if (!value.includes('\0')) this.id = value;
      return;
    }
    if (first === 58) {
      const line = chunk.slice(start, end);
      this.handler.onComment(line.slice(chunk.charCodeAt(start + 1) === SPACE ? 2 : 1));
      return;
    }
    const line = chunk.slice(start, end);
    const separator = line.indexOf(':');
    if (separator === -1) {
      this.processField(line, '');
      return;
    }
    const offset = line.charCodeAt(separator + 1) === SPACE ? 2 : 1;
    this.processField(line.slice(0, separator), line.slice(separator + offset));
  }

  private processField(field: string, value: string): void {
    switch (field) {
      case 'event':
        this.eventType = value || undefined;
        break;
      case 'data':
        this.addData(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.id = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.handler.onRetry(parseInt(value, 10));
        break;
      default:
        // An unknown field is ignored.
        break;
    }
  }

  private dispatchEvent(): void {
    if (this.dataLines > 0) {
      const event: ParsedEvent = { id: this.id, event: this.eventType, data: this.data };
      this.handler.onEvent(event);
    }
    this.clearEvent();
  }
}
