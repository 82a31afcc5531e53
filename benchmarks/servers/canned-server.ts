// A minimal canned-response HTTP server on node:net: answers every request head it sees
// with the same bytes (pipelining included). The cheapest possible target, so a load
// generator benchmark measures the generator. Usage: node canned-server.js <port>
import net from 'node:net';

const RESPONSE = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!');
const END = Buffer.from('\r\n\r\n');

const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  let carry = 0; // bytes of a "\r\n\r\n" matched at the end of the previous read
  socket.on('data', (chunk: Buffer) => {
    let n = 0;
    let pos = 0;
    if (carry > 0) {
      const need = END.subarray(carry);
      if (chunk.subarray(0, need.length).equals(need)) {
        n++;
        pos = need.length;
      }
      carry = 0;
    }
    for (let i = chunk.indexOf(END, pos); i !== -1; i = chunk.indexOf(END, i + 4)) {
      n++;
      pos = i + 4;
    }
    for (let k = 3; k > 0; k--) {
      if (chunk.length - k >= pos && chunk.subarray(chunk.length - k).equals(END.subarray(0, k))) {
        carry = k;
        break;
      }
    }
    if (n === 1) socket.write(RESPONSE);
    else if (n > 1) socket.write(Buffer.concat(Array.from({ length: n }, () => RESPONSE)));
  });
  socket.on('error', () => {});
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as net.AddressInfo).port}\n`);
});
