export * from './connection/index.js';
export * from './post-stream.js';
export * from './standalone-stream.js';
export * from './backoff.js';
export * from './scheduled-wait.js';
export * from './errors.js';
export type * from './types.js';
