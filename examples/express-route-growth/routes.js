'use strict';
// The route table, refreshed from "the config service" every few hundred milliseconds.
const path = require('node:path');
const express = require('express');

const publicDir = path.join(__dirname, 'public');

// Meant to update the static routes in place; instead each refresh appends another
// static-file middleware to the router, which every request then walks through.
function refreshRoutes(router) {
  router.use(express.static(publicDir, { index: false }));
}

function startRefreshing(router, everyMs) {
  refreshRoutes(router);
  return setInterval(() => refreshRoutes(router), everyMs);
}

module.exports = { refreshRoutes, startRefreshing };
