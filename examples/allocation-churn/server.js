'use strict';
// A report endpoint that builds thousands of small objects per request.
const http = require('node:http');

function buildRows(count) {
  const rows = [];
  for (let i = 0; i < count; i++) {
    rows.push({ id: i, label: `row-${i}`, values: [i, i * 2, i * 3], meta: { even: i % 2 === 0 } });
  }
  return rows;
}

function summarize(rows) {
  let total = 0;
  for (const r of rows) total += r.values[2];
  return { rows: rows.length, total };
}

http.createServer(function handleReport(req, res) {
  const body = JSON.stringify(summarize(buildRows(10240)));
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}).listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
