// Failed logins are counted per email and per client address within a window; past the limit,
// further attempts are refused (429) until the window ends. Memory is bounded.
/** The configured limits the throttle reads (src/config.ts describes them). */
export interface ThrottleLimits {
  loginFailuresMax: number;
  loginFailuresPerAddressMax: number;
  loginFailureWindowSeconds: number;
  /** Distinct keys remembered before the oldest are forgotten. */
  loginThrottleKeysMax: number;
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
      this.wait(`email:${email}`, this.limits.loginFailuresMax, nowSeconds),
      this.wait(`address:${address}`, this.limits.loginFailuresPerAddressMax, nowSeconds),
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
    const remaining = window.startSeconds + this.limits.loginFailureWindowSeconds - nowSeconds;
    if (remaining <= 0) {
      this.windows.delete(key);
      return 0;
    }
    return Math.ceil(remaining);
  }

  private bump(key: string, nowSeconds: number): void {
    let window = this.windows.get(key);
    if (!window || window.startSeconds + this.limits.loginFailureWindowSeconds <= nowSeconds) {
      this.windows.delete(key);
      window = { startSeconds: nowSeconds, failures: 0 };
      if (this.windows.size >= this.limits.loginThrottleKeysMax) {
        const oldest = this.windows.keys().next().value;
        if (oldest !== undefined) this.windows.delete(oldest);
      }
      this.windows.set(key, window);
    }
    window.failures++;
  }
}
