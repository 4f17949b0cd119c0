/** Whether the `openssl` CLI runs here (the sandbox's CAs are made with it): tests that need it skip, saying so. */
import { execFileSync } from 'node:child_process';

export const HAS_OPENSSL = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
