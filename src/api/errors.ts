import { Type, type Static } from '@sinclair/typebox';

export const ErrorBody = Type.Object(
  {
    status: Type.Literal('error'),
    error: Type.Object({
      code: Type.String({ description: 'Stable machine-readable code (docs/api.md, Errors).' }),
      message: Type.String(),
      field: Type.Optional(Type.String({ description: 'The request field at fault, for validation errors.' })),
      requestId: Type.String(),
    }),
  },
  { $id: 'ErrorBody' },
);
export type ErrorBody = Static<typeof ErrorBody>;
