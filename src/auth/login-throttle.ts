// Failed logins are counted per email and per client address within a window; past the limit,
// further attempts are refused (429) until the window ends. Memory is bounded.
export interface ThrottleLimits {
  failuresPerEmailMax: number;
  failuresPerAddressMax: number;
  windowSeconds: number;
  /** Distinct keys remembered before the oldest are forgotten. */
  keysMax: number;
}

interface Window {
  startSeconds: number;
  failures: number;
}

export class LoginThrottle {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly limits: ThrottleLimits) {}

  /** Seconds to wait before another attempt, or 0 when one is allowed now. */
  waitSeconds(email: string, address: string, nowSeconds: number): number {
    return Math.max(
      this.wait(`email:${email}`, this.limits.failuresPerEmailMax, nowSeconds),
      this.wait(`address:${address}`, this.limits.failuresPerAddressMax, nowSeconds),
    );
  }

  recordFailure(email: string, address: string, nowSeconds: number): void {
    this.bump(`email:${email}`, nowSeconds);
    this.bump(`address:${address}`, nowSeconds);
  }

  recordSuccess(email: string): void {
    this.windows.delete(`email:${email}`);
  }

  private wait(key: string, failuresMax: number, nowSeconds: number): number {
    const window = this.windows.get(key);
    if (!window || window.failures < failuresMax) return 0;
    const remaining = window.startSeconds + this.limits.windowSeconds - nowSeconds;
    if (remaining <= 0) {
      this.windows.delete(key);
      return 0;
    }
    return Math.ceil(remaining);
  }

  private bump(key: string, nowSeconds: number): void {
    let window = this.windows.get(key);
    if (!window || window.startSeconds + this.limits.windowSeconds <= nowSeconds) {
      this.windows.delete(key);
      window = { startSeconds: nowSeconds, failures: 0 };
      if (this.windows.size >= this.limits.keysMax) {
        const oldest = this.windows.keys().next().value;
        if (oldest !== undefined) this.windows.delete(oldest);
      }
      this.windows.set(key, window);
    }
    window.failures++;
  }
}
