/**
 * `npm run images`: runs `skyhook images` from the sources (type stripping), so a changed checkout
 * is built without compiling dist/ first and an unchanged one answers in well under a second.
 */
import './register-src-hook.ts';

const { runImagesCli } = await import('../src/cli/images.js');
process.exitCode = await runImagesCli(process.argv.slice(2));
