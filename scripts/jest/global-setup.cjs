// Before any test file: the run directory every worker and sandbox of this run registers in.
const { ensureRunDir } = require('./run-dir.cjs');

module.exports = async () => {
  ensureRunDir();
};
