// The programmatic API: `import { load } from 'hotpath'`.
export { HotpathError, errorCodes, type ErrorCode } from './errors.js';
