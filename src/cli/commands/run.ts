import type { Command } from 'commander';

export function defineRunCommand(program: Command): Command {
  return program
    .command('run')
    .description('(run: not built yet)')
    .action(() => {
      throw new Error('wsmirror run is not built yet');
    });
}
