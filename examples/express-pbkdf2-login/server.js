'use strict';
const app = require('./app.js');

app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
