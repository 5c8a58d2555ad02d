import type { Command } from 'commander';

export function defineSyncCommand(program: Command): Command {
  return program
    .command('sync')
    .description('(sync: not built yet)')
    .action(() => {
      throw new Error('wsmirror sync is not built yet');
    });
}
