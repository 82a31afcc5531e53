// Replaces a function property with a wrapper that keeps its name and length, so user code
// that inspects builtins sees what it expects.
export function defineLike(wrapper: Function, original: Function): void {
  try {
    Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
    Object.defineProperty(wrapper, 'length', { value: original.length, configurable: true });
  } catch {
    // Cosmetic only.
  }
}
