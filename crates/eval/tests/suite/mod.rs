mod score;
