// Linking refuses an export whose caller has no project to store its spans in. The error mapper
// (src/http/errors.ts) answers it 400, as it answers the domain's refusals.
export class NoProjectForSpans extends Error {
  constructor() {
    super('No project to store these spans in: the caller is not a member of any project.');
    this.name = 'NoProjectForSpans';
  }
}
