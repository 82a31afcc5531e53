// Makes a wrapper look like the function it replaces: same name and length, and the same
// extra properties (fs.realpathSync.native, setTimeout's util.promisify.custom), so user code
// that inspects or uses them sees what it expects.
export function defineLike(wrapper: Function, original: Function): void {
  for (const key of Reflect.ownKeys(original)) {
    if (key === 'prototype' || key === 'arguments' || key === 'caller') continue;
    try {
      Object.defineProperty(wrapper, key, Object.getOwnPropertyDescriptor(original, key)!);
    } catch {
      // Not copyable: cosmetic only.
    }
  }
}
