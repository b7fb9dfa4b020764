import { Module } from '@nestjs/common';
import { TeamSpaceController } from './teamspace.controller.js';

/** The TeamSpace controller; the Fleet it takes comes from OperatorModule.forRoot({ fleet }). */
@Module({ providers: [TeamSpaceController] })
export class TeamSpaceModule {}
