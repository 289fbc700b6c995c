// The jest runner of this project: jest's own runner, with two changes.
//  1. Real-node files (scripts/jest/real-node-files.cjs) run one at a time, and each takes the
//     machine-wide real-node lock before it is handed to a worker. Waiting for the lock happens
//     here, before the file starts, so it never counts against a test's or a hook's timeout; the
//     other worker keeps running the other files meanwhile.
//  2. A worker that exits while running a file fails that file. jest's runner re-sends the file to a
//     fresh worker up to 3 times and reports the last attempt only, so a crash could pass unseen.
const { mkdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { Worker } = require('jest-worker');
const DefaultRunner = require('jest-runner').default;
const { REAL_NODE_FILE, REAL_NODE_LOCK_DIR } = require('./real-node-files.cjs');

const TEST_WORKER = join(dirname(require.resolve('jest-runner')), 'testWorker.js');

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch (error) {
    return error.code === 'ENOENT' && process.platform !== 'linux';
  }
}

/**
 * Takes the machine-wide real-node lock (a directory holding the owner's pid; a dead owner's lock is
 * broken). Where the lock cannot exist (not root, no /run), runs without it: the file's own
 * precheck then fails it at once with the reason (test/e2e/real-harness.ts).
 */
async function acquireRealNodeLock(file) {
  // Not root: the file cannot run real nodes and fails at once; it must not queue behind the lock.
  if (process.getuid?.() !== 0) return () => undefined;
  let told = false;
  for (;;) {
    try {
      mkdirSync(REAL_NODE_LOCK_DIR);
      writeFileSync(join(REAL_NODE_LOCK_DIR, 'owner'), String(process.pid));
      return () => rmSync(REAL_NODE_LOCK_DIR, { recursive: true, force: true });
    } catch (error) {
      if (error.code !== 'EEXIST') return () => undefined;
    }
    let owner = 0;
    try {
      owner = Number(readFileSync(join(REAL_NODE_LOCK_DIR, 'owner'), 'utf8'));
    } catch {
      // being written or removed
    }
    if (owner && !isAlive(owner)) {
      try {
        rmSync(REAL_NODE_LOCK_DIR, { recursive: true, force: true });
      } catch {
        return () => undefined; // cannot break it here; the file's precheck says why it cannot run
      }
    } else if (!told && owner) {
      told = true;
      console.error(`[runner] ${file} waits for the real-node lock held by pid ${owner} (not counted in its timeouts)`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A FIFO limiter: at most `n` of the functions passed run at once. */
function limiter(n) {
  let active = 0;
  const queue = [];
  const next = () => {
    if (active >= n || queue.length === 0) return;
    active++;
    const { fn, resolve, reject } = queue.shift();
    fn()
      .then(resolve, reject)
      .finally(() => {
        active--;
        next();
      });
  };
  return (fn) =>
    new Promise((resolve, reject) => {
      queue.push({ fn, resolve, reject });
      next();
    });
}

class ProjectRunner {
  supportsEventEmitters = true;
  isSerial = false;
  #listeners = new Map();

  constructor(globalConfig, context) {
    this._globalConfig = globalConfig;
    this._context = context;
    // Tells test/e2e/real-harness.ts that this runner holds the real-node lock around each such file.
    process.env.SKYHOOK_REAL_NODE_LANE = '1';
    this.inBand = new DefaultRunner(globalConfig, context);
    for (const event of [
      'test-file-start',
      'test-file-success',
      'test-file-failure',
      'test-case-start',
      'test-case-result',
    ])
      this.inBand.on(event, (payload) => this.#emit(event, payload));
  }

  on(event, listener) {
    const list = this.#listeners.get(event) ?? [];
    list.push(listener);
    this.#listeners.set(event, list);
    return () =>
      this.#listeners.set(
        event,
        (this.#listeners.get(event) ?? []).filter((l) => l !== listener),
      );
  }

  async #emit(event, payload) {
    await Promise.all((this.#listeners.get(event) ?? []).map((listener) => listener(payload)));
  }

  async runTests(tests, watcher, options) {
    return options.serial ? this.#inBand(tests, watcher) : this.#parallel(tests, watcher);
  }

  /** Runs `run` for `test`, holding the real-node lock when the file needs real nodes. */
  async #withLane(test, realLane, run) {
    if (!REAL_NODE_FILE.test(test.path)) return run();
    return realLane(async () => {
      const release = await acquireRealNodeLock(test.path);
      try {
        return await run();
      } finally {
        release();
      }
    });
  }

  async #inBand(tests, watcher) {
    const lane = limiter(1);
    for (const test of tests) {
      if (watcher.isInterrupted()) return;
      await this.#withLane(test, lane, () => this.inBand.runTests([test], watcher, { serial: true }));
    }
  }

  async #parallel(tests, watcher) {
    const resolvers = new Map();
    for (const test of tests) {
      if (!resolvers.has(test.context.config.id))
        resolvers.set(test.context.config.id, {
          config: test.context.config,
          serializableModuleMap: test.context.moduleMap.toJSON(),
        });
    }
    const worker = new Worker(TEST_WORKER, {
      enableWorkerThreads: this._globalConfig.workerThreads,
      exposedMethods: ['worker'],
      forkOptions: { serialization: 'json', stdio: 'pipe' },
      idleMemoryLimit:
        typeof this._globalConfig.workerIdleMemoryLimit === 'number'
          ? this._globalConfig.workerIdleMemoryLimit
          : undefined,
      // A crashed worker fails its file (jest's runner uses 3 and re-runs the file).
      maxRetries: 0,
      numWorkers: this._globalConfig.maxWorkers,
      setupArgs: [{ serializableResolvers: [...resolvers.values()] }],
      workerGracefulExitTimeout: this._globalConfig.workerGracefulExitTimeout,
    });
    worker.getStdout()?.pipe(process.stdout);
    worker.getStderr()?.pipe(process.stderr);
    const slots = limiter(this._globalConfig.maxWorkers);
    const realLane = limiter(1);
    const context = {
      ...this._context,
      changedFiles: this._context.changedFiles && [...this._context.changedFiles],
      sourcesRelatedToTestsInChangedFiles: this._context.sourcesRelatedToTestsInChangedFiles && [
        ...this._context.sourcesRelatedToTestsInChangedFiles,
      ],
    };
    // A real-node file takes the lane (and the lock) before a worker slot, so waiting never idles a worker.
    const runOne = (test) =>
      this.#withLane(test, realLane, () =>
        slots(async () => {
          if (watcher.isInterrupted()) throw new Error('interrupted');
          await this.#emit('test-file-start', [test]);
          const promise = worker.worker({
            config: test.context.config,
            context,
            globalConfig: this._globalConfig,
            path: test.path,
          });
          promise.UNSTABLE_onCustomMessage?.(([event, payload]) => this.#emit(event, payload));
          return promise;
        }),
      );
    const interrupted = new Promise((_resolve, reject) => {
      watcher.on('change', (state) => {
        if (state.interrupted) reject(new Error('interrupted'));
      });
    });
    const all = Promise.all(
      tests.map((test) =>
        runOne(test).then(
          (result) => this.#emit('test-file-success', [test, result]),
          (error) => this.#emit('test-file-failure', [test, error]),
        ),
      ),
    );
    const cleanup = async () => {
      await worker.end();
    };
    return Promise.race([all, interrupted]).then(cleanup, cleanup);
  }
}

module.exports = ProjectRunner;
