// Every write that lands in a project passes its gate. Deleting a project closes the gate first
// and waits for the writes already inside to finish, so that no record can be created in (or
// moved into) a project while its deletion collects what to delete.

export class ProjectClosed extends Error {
  constructor(readonly project: string) {
    super(`project ${project} is being deleted`);
    this.name = 'ProjectClosed';
  }
}

export class ProjectGates {
  private readonly inside = new Map<string, number>();
  private readonly closed = new Set<string>();
  private readonly drainWaiters = new Map<string, (() => void)[]>();

  isClosed(project: string): boolean {
    return this.closed.has(project);
  }

  /**
   * Runs `write` inside the gates of `projects`; refuses at once if any of them is closed. Every
   * write passes here, so it hands back the write's own promise rather than wrapping it in another.
   */
  pass<T>(projects: readonly string[], write: () => Promise<T>): Promise<T> {
    for (const project of projects) if (this.closed.has(project)) return Promise.reject(new ProjectClosed(project));
    for (const project of projects) this.inside.set(project, (this.inside.get(project) ?? 0) + 1);
    const leave = () => {
      for (const project of projects) this.leave(project);
    };
    let written: Promise<T>;
    try {
      written = write();
    } catch (error) {
      leave();
      return Promise.reject(error);
    }
    written.then(leave, leave);
    return written;
  }

  /** Closes the gate and resolves once no write is inside it. */
  close(project: string): Promise<void> {
    this.closed.add(project);
    if (!this.inside.get(project)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.drainWaiters.get(project) ?? [];
      waiters.push(resolve);
      this.drainWaiters.set(project, waiters);
    });
  }

  reopen(project: string): void {
    this.closed.delete(project);
  }

  private leave(project: string): void {
    const remaining = (this.inside.get(project) ?? 1) - 1;
    if (remaining > 0) {
      this.inside.set(project, remaining);
      return;
    }
    this.inside.delete(project);
    const waiters = this.drainWaiters.get(project);
    if (!waiters) return;
    this.drainWaiters.delete(project);
    for (const wake of waiters) wake();
  }
}
