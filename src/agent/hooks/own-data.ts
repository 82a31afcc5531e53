// Reading and replacing properties of a framework's objects without running any of its code.
// A property can be a getter that throws or prints a deprecation (Express 4's `app.router`),
// a lazy getter that builds state (Express 5's `app.router`) or a setter: the agent only ever
// reads data descriptors and replaces a method by defining it again, so probing a framework
// never calls a user getter or setter, and a property that is not plain data reads as absent.

/** The value of `key` on `obj` or its prototype chain when it is a data property; undefined otherwise. */
export function dataValue(obj: unknown, key: PropertyKey): unknown {
  let o = obj;
  for (let depth = 0; depth < 32 && (typeof o === 'object' || typeof o === 'function') && o !== null; depth++) {
    let d: PropertyDescriptor | undefined;
    try {
      d = Object.getOwnPropertyDescriptor(o, key);
      if (d === undefined) o = Object.getPrototypeOf(o);
    } catch {
      return undefined; // A proxy whose traps throw.
    }
    if (d !== undefined) return 'value' in d ? d.value : undefined;
  }
  return undefined;
}

/** `dataValue` when it is a function. */
export function dataFunction(obj: unknown, key: PropertyKey): Function | undefined {
  const v = dataValue(obj, key);
  return typeof v === 'function' ? v : undefined;
}

/**
 * Replaces `obj`'s own data property `key` with `value`, keeping its attributes. Returns false
 * (and changes nothing) when the property is not an own data property that can be redefined.
 */
export function replaceData(obj: object, key: PropertyKey, value: unknown): boolean {
  try {
    const d = Object.getOwnPropertyDescriptor(obj, key);
    if (d === undefined || !('value' in d)) return false;
    if (d.configurable !== true && d.writable !== true) return false;
    Object.defineProperty(obj, key, { ...d, value });
    return true;
  } catch {
    return false; // Frozen, or a proxy that refuses.
  }
}
