import type { Command } from 'commander';

export function defineStatusCommand(program: Command): Command {
  return program
    .command('status')
    .description('(status: not built yet)')
    .action(() => {
      throw new Error('wsmirror status is not built yet');
    });
}
