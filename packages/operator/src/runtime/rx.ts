// The RxJS the runtime uses, each from its own module: the package's index loads all of
// RxJS (223 modules, ~9 MB of an idle Nest-free operator's RSS, bench/floor.mjs), these
// about 50. They are the index's own files, so an Observable made here is the one a Nest
// application's RxJS knows (`isObservable`, `instanceof`).
export { Observable } from 'rxjs/internal/Observable';
export { Subject } from 'rxjs/internal/Subject';
export { BehaviorSubject } from 'rxjs/internal/BehaviorSubject';
export { defer } from 'rxjs/internal/observable/defer';
export { from } from 'rxjs/internal/observable/from';
export { timer } from 'rxjs/internal/observable/timer';
export { distinctUntilChanged } from 'rxjs/internal/operators/distinctUntilChanged';
export { filter } from 'rxjs/internal/operators/filter';
export { mergeMap } from 'rxjs/internal/operators/mergeMap';
export { repeat } from 'rxjs/internal/operators/repeat';
export { retry } from 'rxjs/internal/operators/retry';
