fairseq-train data-bin/iwslt14 --arch transformer_iwslt_de_en --max-tokens 2048 --lr 5e-4
