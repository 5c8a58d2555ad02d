import type { Command } from 'commander';

export function defineDemoCommand(program: Command): Command {
  return program
    .command('demo')
    .description('(demo: not built yet)')
    .action(() => {
      throw new Error('wsmirror demo is not built yet');
    });
}
