/**
 * Cold start (a fresh process: import, connect, first call) of this transport and of the SDK's,
 * in ms. Measured by `npm run size` (another part of the project); the lead wires it here. Until
 * then it measures nothing, and the benchmark prints "not measured".
 */
export function coldStart(): Promise<{ this: number; sdk: number } | undefined> {
  return Promise.resolve(undefined);
}
