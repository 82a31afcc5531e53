// Interns strings for the embedded payload: each distinct string is stored once and
// referred to by index (function names and file paths repeat heavily in profiles).

export class StringTable {
  readonly strings: string[] = [];
  readonly #index = new Map<string, number>();

  intern(s: string): number {
    let i = this.#index.get(s);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(s);
      this.#index.set(s, i);
    }
    return i;
  }
}
