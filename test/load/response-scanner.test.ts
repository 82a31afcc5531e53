import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResponseScanner, type ScanSink } from '../../src/load/response-scanner.js';

/** Feeds `text` to a scanner in pieces of `step` bytes; returns the responses it reported. */
function scan(
  text: string | Buffer,
  step = Infinity,
  heads: boolean[] = [],
): { responses: [number, boolean][]; ok: boolean; scanner: ResponseScanner } {
  const responses: [number, boolean][] = [];
  const queue = [...heads];
  const sink: ScanSink = {
    onResponse: (status, close) => {
      responses.push([status, close]);
      queue.shift();
    },
    headPending: () => queue[0] === true,
  };
  const scanner = new ResponseScanner(sink);
  const buf = Buffer.isBuffer(text) ? text : Buffer.from(text, 'latin1');
  let ok = true;
  for (let i = 0; i < buf.length && ok; i += step) ok = scanner.feed(buf.subarray(i, Math.min(buf.length, i + step)));
  return { responses, ok, scanner };
}

const cl = 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello';
const chunked =
  'HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: yes\r\nX-Other: 2\r\n\r\n';
const chunkedNoTrailer = 'HTTP/1.1 200 OK\r\ntransfer-encoding: CHUNKED\r\n\r\n3\r\nabc\r\n0\r\n\r\n';

test('Content-Length, chunked (with extensions and trailers) and pipelined responses, split at every byte', () => {
  const stream = cl + chunked + chunkedNoTrailer + cl;
  for (const step of [1, 2, 3, 7, 64, Infinity]) {
    const r = scan(stream, step);
    assert.equal(r.ok, true, `step ${step}`);
    assert.deepEqual(
      r.responses,
      [
        [200, false],
        [201, false],
        [200, false],
        [200, false],
      ],
      `step ${step}`,
    );
    assert.equal(r.scanner.midResponse, false);
  }
});

test('1xx interim responses are skipped; 204 and 304 have no body', () => {
  const r = scan(
    'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n' +
      cl +
      'HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n' +
      'HTTP/1.1 304 Not Modified\r\n\r\n' +
      cl,
    5,
  );
  assert.deepEqual(r.responses, [
    [200, false],
    [204, false],
    [304, false],
    [200, false],
  ]);
});

test('a HEAD response has no body whatever Content-Length says', () => {
  const r = scan('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n' + cl, Infinity, [true, false]);
  assert.deepEqual(r.responses, [
    [200, false],
    [200, false],
  ]);
});

test('Connection: close, HTTP/1.0 defaults and keep-alive lists', () => {
  assert.deepEqual(scan('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n').responses, [[200, true]]);
  assert.deepEqual(scan('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n').responses, [[200, true]]);
  assert.deepEqual(scan('HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n').responses, [[200, false]]);
  assert.deepEqual(scan('HTTP/1.1 200 OK\r\nConnection: upgrade, Close\r\nContent-Length: 0\r\n\r\n').responses, [[200, true]]);
});

test('a body without length or chunking ends when the server closes', () => {
  const r = scan('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome body that runs until close', 4);
  assert.deepEqual(r.responses, []);
  assert.equal(r.scanner.midResponse, true);
  assert.equal(r.scanner.end(), true);
  assert.deepEqual(r.responses, [[200, true]]);
});

test('a close in the middle of a response is reported as cut short', () => {
  const r = scan('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
  assert.equal(r.scanner.end(), false);
  assert.deepEqual(r.responses, []);
});

test('malformed input fails the scan', () => {
  for (const bad of [
    'HTTX/1.1 200 OK\r\n\r\n',
    'HTTP/1.1 2x0 OK\r\n\r\n',
    'HTTP/1.1 700 Nope\r\n\r\n',
    'HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY',
  ]) {
    assert.equal(scan(bad, 3).ok, false, JSON.stringify(bad));
  }
});

test('an endless head is rejected instead of buffered forever', () => {
  const r = scan(Buffer.from('HTTP/1.1 200 OK\r\nX: ' + 'a'.repeat(70 * 1024)), 4096);
  assert.equal(r.ok, false);
});

test('only the first `length` bytes of a reused read buffer are scanned', () => {
  const responses: number[] = [];
  const scanner = new ResponseScanner({
    onResponse: (s) => {
      responses.push(s);
    },
    headPending: () => false,
  });
  const full = Buffer.from(cl, 'latin1');
  const reused = Buffer.concat([full.subarray(0, 20), Buffer.from('\r\n\r\nstale bytes of an older read')]);
  assert.equal(scanner.feed(reused, 20), true);
  assert.deepEqual(responses, []);
  reused.fill(0x41); // the buffer is reused: the scanner must have copied what it kept
  assert.equal(scanner.feed(full.subarray(20)), true);
  assert.deepEqual(responses, [200]);
});
