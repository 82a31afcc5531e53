'use strict';
// A login API: /signup stores a salted password hash, /auth checks it.
const crypto = require('node:crypto');
const express = require('express');

const users = new Map();
const app = express();
app.use(express.json());

function hashPassword(password, salt) {
  return crypto.pbkdf2Sync(password, salt, 10000, 64, 'sha512');
}

app.post('/signup', function signup(req, res) {
  const { username, password } = req.body;
  const salt = crypto.randomBytes(16);
  users.set(username, { salt, hash: hashPassword(password, salt) });
  res.status(201).json({ ok: true });
});

app.post('/auth', function login(req, res) {
  const user = users.get(req.body.username);
  if (!user) return res.status(401).json({ ok: false });
  const hash = crypto.pbkdf2Sync(req.body.password, user.salt, 10000, 64, 'sha512');
  res.json({ ok: crypto.timingSafeEqual(hash, user.hash) });
});

module.exports = app;
