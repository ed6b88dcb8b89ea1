import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

// Many tests start the real CLI as a child process; give them room on a busy 2-core machine.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // the user's own sop settings (an allow file of MCP servers) never reach a test: a folder that does not exist
    env: { SOP_CONFIG_DIR: resolve('test/fixtures/no-user-config') },
  },
});
