import type { Command } from 'commander';

export function defineEmulatorCommand(program: Command): Command {
  return program
    .command('emulator')
    .description('(emulator: not built yet)')
    .action(() => {
      throw new Error('wsmirror emulator is not built yet');
    });
}
