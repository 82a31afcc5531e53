'use strict';
// An Express app whose dynamic routes are refreshed periodically (routes.js).
const express = require('express');
const { startRefreshing } = require('./routes.js');

const app = express();
const dynamic = express.Router();
app.use(dynamic);

app.get('/', function home(req, res) {
  res.json({ status: 'ok', time: Date.now() });
});

app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
startRefreshing(dynamic, 150);
