/**
 * A store URL as it may be shown: `scheme://user:secret@host/db` with its
 * password replaced, for messages, `server --as-json` and the store's
 * location. (storage/ref.ts redactUrl is another rule: it hides a presigned
 * URL's query.) Loaded by the start-up path, so it imports nothing.
 */
export function redactPassword(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*):[^@/]*@/i, "$1:***@");
}
