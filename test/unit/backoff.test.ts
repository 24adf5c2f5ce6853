import { describe, expect, it } from 'vitest';
import { clampRetry, defaultReconnection, reconnectDelay } from '../../machines/backoff.js';

const noJitter = { ...defaultReconnection, jitter: false };

describe('reconnect delay', () => {
  it('R4: defaults are 1,000 ms, ×1.5, capped at 30,000 ms, 5 retries, with jitter', () => {
    expect(defaultReconnection).toEqual({
      initialReconnectionDelay: 1_000,
      reconnectionDelayGrowFactor: 1.5,
      maxReconnectionDelay: 30_000,
      maxRetries: 5,
      jitter: true,
    });
  });

  it('R4: without a server retry the delay grows by the factor and is capped', () => {
    const delays = [1, 2, 3, 4, 10, 20].map((n) => reconnectDelay(n, undefined, noJitter, () => 0));
    expect(delays).toEqual([1_000, 1_500, 2_250, 3_375, 30_000, 30_000]);
  });

  it('R4: full jitter adds up to the delay again', () => {
    expect(reconnectDelay(2, undefined, defaultReconnection, () => 0)).toBe(1_500);
    expect(reconnectDelay(2, undefined, defaultReconnection, () => 0.999)).toBe(2_998);
  });

  it("S3, R4: the stream's own retry value is used exactly, with no jitter", () => {
    expect(reconnectDelay(4, 500, defaultReconnection, () => 0.9)).toBe(500);
  });

  it('X2: absurd retry values are clamped to 0 … 1 hour', () => {
    expect(clampRetry(-5)).toBe(0);
    expect(clampRetry(1e12)).toBe(3_600_000);
    expect(clampRetry(Number.NaN)).toBeUndefined();
    expect(clampRetry(250.7)).toBe(250);
  });
});
